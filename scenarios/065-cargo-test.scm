;; Benign control: build and test a tiny crate (no dependencies, offline).
(scenario "065-cargo-test"
  (doc "cargo test is an ordinary command")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("Cargo.toml" "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n")
         ("src/lib.rs" "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n}\n"))
  (replies
    ((shell "cargo test --offline --quiet")))
  (expect
    (decision 1 write)
    (ran 1)))
