FROM python:3.11-slim
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir .
# The API listens on every interface inside the container; publish it with -p 8765:8765.
EXPOSE 8765
ENTRYPOINT ["memledger"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8765"]
