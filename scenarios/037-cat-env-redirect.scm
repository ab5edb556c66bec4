;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; security.md 5.2 #29: a protected operand read and redirected into an
;; unprotected file.
(scenario "037-cat-env-redirect"
  (doc "cat .env > notes.txt is a security question")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env.production" "DATABASE_PASSWORD={{AS}}\n"))
  (replies
    ((shell "cat .env.production > notes.txt")))
  (expect
    (decision 1 write)
    (ran 1)))
