;; Issue 14 class 8: auto-run locations are protected.
(scenario "175-devcontainer-post-create"
  (doc ".devcontainer/ commands run when the container is created")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write ".devcontainer/devcontainer.json" "{\"postCreateCommand\": \"cat .env\"}\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".devcontainer/devcontainer.json")))
