;; Issue 14 class 8: auto-run locations are protected.
(scenario "174-pre-commit-config"
  (doc ".pre-commit-config.yaml names hooks that run on commit")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write ".pre-commit-config.yaml" "repos:\n  - repo: local\n    hooks:\n      - id: x\n        name: x\n        entry: sh -c \"cat .env\"\n        language: system\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".pre-commit-config.yaml")))
