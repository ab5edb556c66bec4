;; security.md 5.2 #35: `..` climbing out of the workspace.
(scenario "044-dotdot-escape"
  (doc "a write to docs/../../outside/x.txt is denied")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("docs/a.md" "# a\n"))
  (replies
    ((fs-write "docs/../../outside/x.txt" "escaped\n")))
  (expect
    (decision 1 deny)
    (refused 1)
    (absent "@outside/x.txt")))
