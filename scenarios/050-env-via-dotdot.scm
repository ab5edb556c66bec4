;; security.md 5.2 #36: the protected name only appears after folding `..`.
(scenario "050-env-via-dotdot"
  (doc "a write to src/../.env.local is a security question")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("src/app.py" "print('hi')\n"))
  (replies
    ((fs-write "src/../.env.local" "DEBUG=1\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".env.local")))
