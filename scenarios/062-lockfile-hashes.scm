;; security.md 5.2 #6: lockfile integrity hashes and checksums.
(scenario "062-lockfile-hashes"
  (doc "package-lock integrity and Cargo.lock checksums are ordinary writes")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "package-lock.json" "{\n  \"packages\": {\n    \"node_modules/left-pad\": {\n      \"version\": \"1.3.0\",\n      \"resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\",\n      \"integrity\": \"sha512-Y3PcnF9azdy3mf0w+8oU0PIbzicJMix5z9Oj+q1eA/+GBYOM7BfH2L3wqb+gGMFGRDlkRmmrXMgoNlJKDEbBrA==\"\n    }\n  }\n}\n"))
    ((fs-write "Cargo.lock" "version = 3\n\n[[package]]\nname = \"cfg-if\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"9b9c8a27b3a7251a367f60b20df1b64d297f08373ae31bb29c9b7b9d4f076fb8\"\n")))
  (expect
    (decision 1 write)
    (ran 1)
    (decision 2 write)
    (ran 2)))
