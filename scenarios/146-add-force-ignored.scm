;; Issue 14 class 5.
(scenario "146-add-force-ignored"
  (doc "git add -f stages ignored files holding a secret")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n")
         (".gitignore" "build/\n")
         ("build/out.txt" "token={{GH}}\n"))
  (git "README.md" ".gitignore")
  (replies
    ((shell "git add -f build && git commit -qm build")))
  (expect
    (decision 1 security)
    (refused 1)))
