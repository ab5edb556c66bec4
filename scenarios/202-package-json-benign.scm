(scenario "202-package-json-benign"
  (doc "a package.json with ordinary scripts")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write "package.json" "{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"node --test\", \"lint\": \"eslint src\"}\n}\n")))
  (expect
    (decision 1 write)
    (ran 1)))
