;; security.md 3.4: public key material is not secret.
(scenario "067-public-key"
  (doc "writing an SSH public key is an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "deploy/authorized_keys" "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKpU3M1uF8w0tVqLh5xJzR2yC7nD4eG9oB6sT1aW3cXv ci@build\n")))
  (expect
    (decision 1 write)
    (ran 1)))
