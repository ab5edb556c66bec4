;; Issue 14 false positive.
(scenario "185-printenv-path"
  (doc "printenv PATH prints one ordinary variable")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "printenv PATH")))
  (expect
    (decision 1 write)
    (ran 1)))
