;; Looking at a repository: git reads are allowed, a plain git command is
;; an ordinary command.
(scenario "064-git-inspection"
  (doc "git status, log and diff need no security confirm")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n"))
  (git)
  (replies
    ((git-status) (git-log 5) (git-diff))
    ((shell "git diff --stat HEAD")))
  (expect
    (decision 1 allow)
    (decision 2 allow)
    (decision 3 allow)
    (decision 4 write)
    (ran 4)))
