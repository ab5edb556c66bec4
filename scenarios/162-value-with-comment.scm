;; Issue 14 class 7.
(scenario "162-value-with-comment"
  (doc "a value followed by a comment is learned without it")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "API_SECRET=Zq81LwPx0vKn5RkYt3Hm # production\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write "notes.md" "the key is Zq81LwPx0vKn5RkYt3Hm\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (absent "notes.md")))
