(scenario "192-git-stage-clean"
  (doc "git stage and commit of a clean change")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\n")
         ("README.md" "# app\n\nA small app.\n"))
  (git "README.md")
  (replies
    ((shell "git stage src/app.py && git -c core.autocrlf=false commit -qm \"count\"")))
  (expect
    (decision 1 write)
    (ran 1)))
