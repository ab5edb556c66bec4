;; A secret store is written, not read: what goes in is judged on its own.
(scenario "201-append-env-setting"
  (doc "appending a setting to .env is a write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env" "APP_NAME=demo\n"))
  (replies
    ((shell "echo DEBUG=1 >> .env")))
  (expect
    (decision 1 write)
    (ran 1)))
