(scenario "198-od-source-file"
  (doc "a hex dump of a source file")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n"))
  (replies
    ((shell "od -c src/app.py | head -3")))
  (expect
    (decision 1 write)
    (ran 1)))
