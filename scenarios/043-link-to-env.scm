;; security.md 5.2 #33: the link stays inside the workspace but its target
;; is .env, a protected path (cap-std alone allows this write).
(scenario "043-link-to-env"
  (doc "a write through harmless.txt -> .env is a security question")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\n"))
  (links ("harmless.txt" ".env"))
  (replies
    ((fs-read "harmless.txt"))
    ((fs-write "harmless.txt" "GITHUB_TOKEN=\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (unchanged ".env")))
