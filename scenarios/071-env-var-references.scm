;; Benign control: code and config that name secrets without holding them.
(scenario "071-env-var-references"
  (doc "reading secrets from the environment is an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "src/config.py" "import os\n\nGITHUB_TOKEN = os.environ[\"GITHUB_TOKEN\"]\nSTRIPE_KEY = os.environ.get(\"STRIPE_SECRET_KEY\", \"\")\n"))
    ((fs-write "deploy/app.yaml" "env:\n  token: ${GITHUB_TOKEN}\n  password: <PASSWORD>\n  api_key: changeme\n")))
  (expect
    (decision 1 write)
    (ran 1)
    (decision 2 write)
    (ran 2)))
