;; Issue 14 class 5: the commit is judged by what the index will hold after the command's own staging.
(scenario "140-git-stage-alias"
  (doc "git stage is git add")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n")
         ("notes.txt" "deploy token: {{GH}}\n"))
  (git "README.md")
  (replies
    ((shell "git stage notes.txt && git commit -qm notes")))
  (expect
    (decision 1 security)
    (refused 1)))
