;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 18 item 6.
(scenario "168-cp-outside"
  (doc "copying into a directory beside the workspace is a write outside it")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (outside ("victim.txt" "keep me\n"))
  (replies
    ((shell "cp README.md ../outside/victim.txt")))
  (expect
    (decision 1 write)
    (ran 1)
    (unchanged "@outside/victim.txt")))
