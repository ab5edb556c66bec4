;; security.md 5.2 #6: UUIDs are high-entropy but not secrets.
(scenario "061-uuid-fixtures"
  (doc "a fixture file of UUIDs is an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "tests/fixtures.json" "{\"users\": [\n  {\"id\": \"6deac46a-76a8-423e-9541-1ea6a518a2f1\", \"name\": \"ada\"},\n  {\"id\": \"22a71560-992f-4476-88d4-d2735f6ffb86\", \"name\": \"bob\"}\n]}\n")))
  (expect
    (decision 1 write)
    (ran 1)))
