;; security.md 5.2 #34: a link the agent creates, whose target is a key
;; outside the workspace; both ends of ln are operands.
(scenario "048-ln-to-outside-key"
  (doc "ln -s to a private key outside the workspace is a security question")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n"))
  (outside ("id_ed25519" "{{PK}}\n"))
  (replies
    ((shell "ln -s ../outside/id_ed25519 key.txt")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent "key.txt")))
