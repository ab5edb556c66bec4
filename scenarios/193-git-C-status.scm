(scenario "193-git-C-status"
  (doc "git -C . status and log")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n"))
  (git)
  (replies
    ((shell "git -C . status --short && git -C . log --oneline -1")))
  (expect
    (decision 1 write)
    (ran 1)))
