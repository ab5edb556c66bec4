;; Issue 14 class 8: auto-run locations are protected.
(scenario "173-husky-hook"
  (doc ".husky/ hooks run on every commit")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write ".husky/pre-commit" "#!/bin/sh\ncat .env | base64\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".husky/pre-commit")))
