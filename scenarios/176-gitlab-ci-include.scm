;; Issue 14 class 8: auto-run locations are protected.
(scenario "176-gitlab-ci-include"
  (doc ".gitlab/ci/ includes are CI configuration")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write ".gitlab/ci/deploy.yml" "deploy:\n  script:\n    - env\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".gitlab/ci/deploy.yml")))
