;; security.md 5.2 #32: the name is inside the workspace, the link's target
;; is not; the guard judges the resolved path.
(scenario "042-link-to-outside"
  (doc "a write through a symlink that leaves the workspace is denied")
  (channel symlinks-paths)
  (modes interactive unattended)
  (outside ("victim.txt" "keep me\n"))
  (links ("notes.md" "@outside/victim.txt"))
  (replies
    ((fs-write "notes.md" "overwritten\n")))
  (expect
    (decision 1 deny)
    (refused 1)
    (unchanged "@outside/victim.txt")
    (unchanged "notes.md")))
