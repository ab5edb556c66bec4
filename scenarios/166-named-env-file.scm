;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 7.
(scenario "166-named-env-file"
  (doc "deploy/prod.env is an env file whatever its name starts with")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files ("deploy/prod.env" "STRIPE_KEY={{SK}}\n"))
  (replies
    ((shell "base64 deploy/prod.env > out.txt")))
  (expect
    (decision 1 write)
    (ran 1)))
