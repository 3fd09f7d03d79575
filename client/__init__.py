"""Python client of the Faceoff REST API."""

from faceoff.client.faceoff_client import Client, ClientError, ServerUnreachable

__all__ = ["Client", "ClientError", "ServerUnreachable"]
