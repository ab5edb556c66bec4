;; Issue 14 class 1: project config may only add protection; its negations are dropped.
(scenario "102-config-negation-env-write"
  (doc "a workspace .nib/config.toml that negates .env* does not make writing .env ordinary")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files (".nib/config.toml" "[guard]\nprotected = [\"!.env*\", \"!.github/workflows/\", \"deploy/*.yaml\"]\n")
         (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write ".env" "GITHUB_TOKEN=\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (unchanged ".env")))
