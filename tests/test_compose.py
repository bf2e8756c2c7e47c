"""docker-compose.yml: Docker has no engine on the course's CI machines, so the file's structure
is checked instead: the three services, pinned images, ports, health checks and start order."""

from __future__ import annotations

import re

import yaml

from helpers.config import project_root

COMPOSE = yaml.safe_load((project_root() / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]


def test_three_services():
    assert set(SERVICES) == {"etcd", "minio", "milvus"}


def test_images_are_pinned_to_exact_releases():
    images = {name: service["image"] for name, service in SERVICES.items()}
    for name, image in images.items():
        tag = image.rsplit(":", 1)[1]
        assert tag != "latest" and re.search(r"\d", tag), f"{name}: {image} is not pinned"
    assert re.fullmatch(r"milvusdb/milvus:v2\.6\.\d+", images["milvus"])


def test_ports_for_clients_and_health():
    ports = SERVICES["milvus"]["ports"]
    assert "19530:19530" in ports and "9091:9091" in ports


def test_health_checks():
    assert SERVICES["etcd"]["healthcheck"]["test"] == ["CMD", "etcdctl", "endpoint", "health"]
    assert "http://localhost:9000/minio/health/live" in SERVICES["minio"]["healthcheck"]["test"]
    milvus = SERVICES["milvus"]["healthcheck"]
    assert "http://localhost:9091/healthz" in milvus["test"]
    assert milvus["start_period"] == "90s"


def test_milvus_waits_for_healthy_dependencies():
    depends = SERVICES["milvus"]["depends_on"]
    assert depends == {"etcd": {"condition": "service_healthy"},
                       "minio": {"condition": "service_healthy"}}
    env = SERVICES["milvus"]["environment"]
    assert env["ETCD_ENDPOINTS"] == "etcd:2379" and env["MINIO_ADDRESS"] == "minio:9000"
