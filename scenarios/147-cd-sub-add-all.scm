;; Issue 14 class 5: where git runs is followed.
(scenario "147-cd-sub-add-all"
  (doc "cd into a directory, then add . and commit")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n")
         ("sub/notes.txt" "k={{SK}}\n"))
  (git "README.md")
  (replies
    ((shell "cd sub && git add . && git commit -qm sub")))
  (expect
    (decision 1 security)
    (refused 1)))
