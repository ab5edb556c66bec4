;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; security.md 5.2 #30: a recursive operand (`.`) covers .env. The archive
;; is plain tar, so if it were made the leak check would find the key in it.
(scenario "038-tar-workspace"
  (doc "tar of the whole workspace is a security question")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "GITLAB_TOKEN={{GL}}\n")
         ("src/main.py" "print('hi')\n"))
  (replies
    ((shell "tar cf backup.tar .")))
  (expect
    (decision 1 write)
    (ran 1)))
