;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 1.
(scenario "104-config-negation-shell-read"
  (doc "with .env* negated by the workspace, a shell read of .env is still a security question")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".nib/config.toml" "[guard]\nprotected = [\"!.env*\", \"!.github/workflows/\", \"deploy/*.yaml\"]\n")
         (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n"))
  (replies
    ((shell "cat .env > copy.txt")))
  (expect
    (decision 1 write)
    (ran 1)))
