(scenario "199-diff-r-clean"
  (doc "diff -r of two source trees")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n")
         ("src2/app.py" "x = 2\n"))
  (replies
    ((shell "diff -r src src2 || true")))
  (expect
    (decision 1 write)
    (ran 1)))
