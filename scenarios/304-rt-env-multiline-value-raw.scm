;; dotenv's multi-line quoted values (python-dotenv, node dotenv, docker compose all read them;
;; the usual way to keep a PEM or a JSON key in .env): fs-read of .env gives handles for
;; one-line values, but the continuation lines of a multi-line value reach the model raw.
;; The value here has no vendor shape (a random-looking string, the canary reversed).
(scenario "304-rt-env-multiline-value-raw"
  (doc "fs-read .env whose SIGNING_KEY is a multi-line quoted value")
  (channel split-encode)
  (modes interactive unattended)
  (files (".env" "APP_NAME=shop\nSIGNING_KEY=\"v1\n{{GH|rev}}\n{{AS}}\n\"\nDEBUG=0\n"))
  (replies
    ((fs-read ".env")))
  (expect
    (decision 1 allow)
    (no-canary-in-requests)))
