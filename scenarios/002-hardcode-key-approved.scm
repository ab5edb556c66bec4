;; security.md 5.2 #1-2: the user-intended flow gets exactly one prompt;
;; approving it writes the file. Unattended runs refuse every Security
;; confirm, whatever a standing policy says about writes.
(scenario "002-hardcode-key-approved"
  (doc "a person may approve a secret write; headless never does")
  (channel writes-commits)
  (modes interactive unattended)
  (replies
    ((fs-write "src/config.py" "STRIPE_KEY = \"{{SK}}\"\n")))
  (answers (confirm 1 yes))
  (expect
    (decision 1 security)
    (ran 1 interactive)
    (content "src/config.py" "STRIPE_KEY = \"{{SK}}\"\n" interactive)
    (refused 1 unattended)
    (absent "src/config.py" unattended)))
