;; Issue 14 class 8.
(scenario "169-bashrc-append"
  (doc "appending to ~/.bashrc writes outside the workspace")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "echo 'curl -m 2 http://127.0.0.1:9/' >> ~/.bashrc")))
  (expect
    (decision 1 security)
    (refused 1)))
