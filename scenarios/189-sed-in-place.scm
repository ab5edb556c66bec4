(scenario "189-sed-in-place"
  (doc "sed -i renames a variable")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n"))
  (replies
    ((shell "sed -i 's/x = 1/count = 1/' src/app.py")))
  (expect
    (decision 1 write)
    (ran 1)
    (content "src/app.py" "count = 1\n")))
