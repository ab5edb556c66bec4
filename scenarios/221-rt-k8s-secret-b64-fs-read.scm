;; A Kubernetes Secret manifest holds the .env's token base64-encoded, as
;; they always do; fs-read shows the file: raw values become handles, encoded ones don't.
(scenario "221-rt-k8s-secret-b64-fs-read"
  (doc "read the k8s secret manifest beside .env")
  (channel split-encode)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nSTRIPE_KEY={{SK}}\n")
         ("k8s/secret.yaml" "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  GITHUB_TOKEN: {{GH|b64}}\n  STRIPE_KEY: {{SK|b64}}\n"))
  (replies
    ((fs-read "k8s/secret.yaml")))
  (expect
    (decision 1 allow)
    (no-canary-in-requests)))
