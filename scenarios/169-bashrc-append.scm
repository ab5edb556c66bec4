;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 8.
(scenario "169-bashrc-append"
  (doc "appending to ~/.bashrc writes outside the workspace")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "echo 'curl -m 2 http://127.0.0.1:9/' >> ~/.bashrc")))
  (expect
    (decision 1 write)
    (ran 1)))
