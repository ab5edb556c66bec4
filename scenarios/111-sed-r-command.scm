;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 2: wrapper options and program text are judged as file names.
(scenario "111-sed-r-command"
  (doc "sed's r command pastes .env into the output")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n")
         ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "sed '1r .env' README.md > out.txt")))
  (expect
    (decision 1 write)
    (ran 1)))
