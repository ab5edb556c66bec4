;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 3: walks are checked following links the way the program does.
(scenario "122-grep-R-follows-link"
  (doc "grep -R follows a link in the tree to .env")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n")
         ("docs/guide.md" "# Guide\n"))
  (links ("docs/notes.md" ".env"))
  (replies
    ((shell "grep -R TOKEN docs > out.txt")))
  (expect
    (decision 1 write)
    (ran 1)))
