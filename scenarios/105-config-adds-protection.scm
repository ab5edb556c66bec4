;; Issue 14 class 1: adding protection works.
(scenario "105-config-adds-protection"
  (doc "a pattern the workspace config adds protects its files")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files (".nib/config.toml" "[guard]\nprotected = [\"!.env*\", \"!.github/workflows/\", \"deploy/*.yaml\"]\n")
         ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write "deploy/app.yaml" "replicas: 3\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent "deploy/app.yaml")))
