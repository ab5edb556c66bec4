;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 4: renames are tracked.
(scenario "134-script-renamed-mv"
  (doc "a script the session wrote stays judged after mv renames it")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n"))
  (replies
    ((fs-write "x.sh" "cat .env > out.txt\n"))
    ((shell "mv x.sh y.sh"))
    ((shell "sh y.sh")))
  (expect
    (decision 1 write)
    (ran 1)
    (decision 2 write)
    (ran 2)
    (decision 3 write)
    (ran 3)))
