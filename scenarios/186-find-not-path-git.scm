;; Issue 14 false positive.
(scenario "186-find-not-path-git"
  (doc "find with -not -path './.git/*' names no file")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n"))
  (git)
  (replies
    ((shell "find . -not -path './.git/*' -name '*.py'")))
  (expect
    (decision 1 write)
    (ran 1)))
