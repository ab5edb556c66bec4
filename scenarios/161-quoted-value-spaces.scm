;; Issue 14 class 7.
(scenario "161-quoted-value-spaces"
  (doc "a quoted value with spaces is a secret too")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "DB_PASSWORD=\"correct horse battery staple\"\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write "notes.md" "password: correct horse battery staple\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (absent "notes.md")))
