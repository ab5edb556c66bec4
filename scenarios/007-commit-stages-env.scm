;; security.md 5.2 #8 and 4.1: `git add -A` names no path, but the commit
;; that follows would carry .env; the outgoing diff is what gets scanned.
(scenario "007-commit-stages-env"
  (doc "a commit whose staged diff holds a secret needs a security confirm")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n")
         (".env" "NPM_TOKEN={{NPM}}\n"))
  (git "app.py")
  (replies
    ((shell "git add -A"))
    ((shell "git commit -q -m wip")))
  (expect
    (decision 1 write)
    (ran 1)
    (decision 2 security)
    (refused 2)))
