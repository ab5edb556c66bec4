;; The AWS secret key has no distinctive shape (40 characters of base64
;; alphabet); only the ledger, fed by reading .env, knows it, here
;; percent-encoded (its / and + become %2F and %2B).
(scenario "030-percent-encoded-secret"
  (doc "a percent-encoded AWS secret key is a security question")
  (channel split-encode)
  (modes interactive unattended)
  (files (".env" "AWS_SECRET_ACCESS_KEY={{AS}}\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write "config/query.txt" "k={{AS|url}}\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (absent "config/query.txt")))
