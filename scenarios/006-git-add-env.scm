;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; security.md 5.2 #8: staging .env names a protected path. The add runs on
;; the masked (empty) file and nib takes it back after the command
;; (prim/tools/gitcheck.rs), so the commit after it has nothing to send.
(scenario "006-git-add-env"
  (doc "git add .env is taken back after the command; the commit after it sends nothing")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n")
         (".env" "GITHUB_TOKEN={{GH}}\n"))
  (git "app.py")
  (replies
    ((shell "git add .env"))
    ((shell "git commit -q -m config")))
  (expect
    (decision 1 write)
    (ran 1)
    (decision 2 write)))
