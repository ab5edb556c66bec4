;; Issue 14 false positive: template values are not learned.
(scenario "187-template-defaults-in-code"
  (doc "defaults from .env.example used in code are not secrets")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env.example" "DATABASE_URL=postgres://localhost/dev\nSECRET_KEY=changeme-dev-only-7f3a\n"))
  (replies
    ((fs-read ".env.example"))
    ((fs-write "settings.py" "import os\nDATABASE_URL = os.environ.get(\"DATABASE_URL\", \"postgres://localhost/dev\")\nSECRET_KEY = os.environ.get(\"SECRET_KEY\", \"changeme-dev-only-7f3a\")\n")))
  (expect
    (decision 1 allow)
    (decision 2 write)
    (ran 2)))
