;; Decoding hex runs must not flag ordinary digests.
(scenario "204-hex-checksums-in-code"
  (doc "hex checksums and ids in code next to a known secret")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write "src/sums.py" "SUMS = {\n    \"a\": \"9b74c9897bac770ffc029102a200c5de\",\n    \"b\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\n}\n")))
  (expect
    (decision 1 allow)
    (decision 2 write)
    (ran 2)))
