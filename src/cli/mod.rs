//! The command line: flags in, settings out, one function per subcommand.
