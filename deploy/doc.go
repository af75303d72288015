// Package deploy holds no code: its tests check the deployment files beside
// them (Kubernetes manifests, the nginx configuration, the Dockerfile).
package deploy
