;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; security.md 5.2 #8: staging .env names a protected path. With the add
;; refused nothing is staged, so the commit after it is ordinary.
(scenario "006-git-add-env"
  (doc "git add .env is a security question; the empty commit after it is not")
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
    (decision 2 security)
    (refused 2)))
