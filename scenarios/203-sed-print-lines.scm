(scenario "203-sed-print-lines"
  (doc "sed printing a range")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "sed -n '1,2p' README.md")))
  (expect
    (decision 1 write)
    (ran 1)))
